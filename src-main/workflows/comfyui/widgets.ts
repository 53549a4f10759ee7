/**
 * The field names of the editor form's `widgets_values`, in order, for ComfyUI's common core
 * nodes. The editor form stores a node's settings as a bare list; the API form (what the
 * workflow engine runs) names them. `control_after_generate` is the editor's own setting (what
 * to do with the seed after a run): it takes a place in the list but is not sent to the engine.
 */
export const CORE_WIDGETS: Readonly<Record<string, readonly string[]>> = {
  KSampler: [
    'seed',
    'control_after_generate',
    'steps',
    'cfg',
    'sampler_name',
    'scheduler',
    'denoise',
  ],
  KSamplerAdvanced: [
    'add_noise',
    'noise_seed',
    'control_after_generate',
    'steps',
    'cfg',
    'sampler_name',
    'scheduler',
    'start_at_step',
    'end_at_step',
    'return_with_leftover_noise',
  ],
  CLIPTextEncode: ['text'],
  EmptyLatentImage: ['width', 'height', 'batch_size'],
  CheckpointLoaderSimple: ['ckpt_name'],
  LoadImage: ['image', 'upload'],
  SaveImage: ['filename_prefix'],
  PreviewImage: [],
  VAEDecode: [],
  VAEEncode: [],
  LoraLoader: ['lora_name', 'strength_model', 'strength_clip'],
  ImageScale: ['upscale_method', 'width', 'height', 'crop'],
}

/** Editor-only widgets: they hold a place in `widgets_values` but are not node inputs. */
export const EDITOR_ONLY_WIDGETS = new Set(['control_after_generate'])

/**
 * Other nodes that ship with ComfyUI: not exposed, but not "custom" either, so an import does
 * not warn about them.
 */
export const OTHER_CORE_NODES = new Set([
  'VAELoader',
  'CLIPLoader',
  'DualCLIPLoader',
  'UNETLoader',
  'CLIPSetLastLayer',
  'ConditioningCombine',
  'ConditioningSetArea',
  'ControlNetLoader',
  'ControlNetApply',
  'ControlNetApplyAdvanced',
  'LatentUpscale',
  'LatentUpscaleBy',
  'UpscaleModelLoader',
  'ImageUpscaleWithModel',
  'ImageScaleBy',
  'LoadImageMask',
  'VAEEncodeForInpaint',
  'SaveAnimatedWEBP',
  'SaveAnimatedPNG',
  'ImageInvert',
  'ImageBatch',
  'EmptySD3LatentImage',
  'FluxGuidance',
])

/** Nodes of the editor that the engine never sees: notes, and pass-through wiring. */
export const EDITOR_ONLY_NODES = new Set(['Note', 'MarkdownNote', 'PrimitiveNode', 'Reroute'])

/** ComfyUI's samplers and schedulers, offered as the choices of the exposed inputs. */
export const SAMPLERS = [
  'euler',
  'euler_ancestral',
  'heun',
  'heunpp2',
  'dpm_2',
  'dpm_2_ancestral',
  'lms',
  'dpm_fast',
  'dpm_adaptive',
  'dpmpp_2s_ancestral',
  'dpmpp_sde',
  'dpmpp_sde_gpu',
  'dpmpp_2m',
  'dpmpp_2m_sde',
  'dpmpp_2m_sde_gpu',
  'dpmpp_3m_sde',
  'dpmpp_3m_sde_gpu',
  'ddpm',
  'lcm',
  'ddim',
  'uni_pc',
  'uni_pc_bh2',
] as const

export const SCHEDULERS = [
  'normal',
  'karras',
  'exponential',
  'sgm_uniform',
  'simple',
  'ddim_uniform',
  'beta',
] as const

export const isCoreNode = (classType: string): boolean =>
  classType in CORE_WIDGETS || OTHER_CORE_NODES.has(classType) || EDITOR_ONLY_NODES.has(classType)
