// Records made at random from the contract's schemas, seeded, then made to agree with the
// request the way any real service's answers do: the organization asked for, the ids in the path,
// the parent a child hangs off. Nothing else is fixed: every other value is the generator's.
import { createHash } from 'node:crypto'
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import { generateSync, type Random } from 'json-schema-faker'
import { OFFSET_DATE_TIME, type Contract, type Widening } from './contract'

type Json = Record<string, unknown>

/** A 32-bit seed for one answer, from the service's seed and what the answer is for. */
export function seedFor(seed: number, key: string): number {
  return createHash('sha256').update(`${seed}\u0000${key}`).digest().readUInt32LE(0)
}

// The path parameter a child record names its parent by, where the field is called otherwise.
const PARAM_FIELDS: Record<string, string> = {
  comfyui_workflow_id: 'wfengine_workflow_id',
  node_id: 'flow_node_id',
}

const snake = (name: string) => name.replace(/(?<!^)([A-Z])/g, '_$1').toLowerCase()

/** A date-time the way callback payloads write it: `+00:00`, some fraction digits. */
function offsetTime(random: Random): string {
  const ms = Date.UTC(2000, 0, 1) + random.int(0, 30 * 365 * 86_400) * 1000
  const fraction = String(random.int(0, 999_999)).padStart(6, '0')
  return new Date(ms).toISOString().replace(/\.\d+Z$/, `.${fraction}+00:00`)
}

const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

// Compiled once per process, not once per service: compiling is most of a small service's time.
let ajv: Ajv2020 | undefined
const validators = new Map<string, ValidateFunction>()
/** The components each root schema reaches, per generator schemas: the generator walks all it is given, every time. */
const reachedBy = new WeakMap<Record<string, Json>, Map<string, Json>>()

export class RecordMaker {
  private readonly schemas: Record<string, Json>
  private readonly reached: Map<string, Json>

  constructor(
    private readonly contract: Contract,
    widening: Widening,
    private readonly seed: number,
    private readonly orgId: string,
  ) {
    this.schemas = contract.generated(widening)
    let reached = reachedBy.get(this.schemas)
    if (!reached) {
      reached = new Map()
      reachedBy.set(this.schemas, reached)
    }
    this.reached = reached
  }

  /** A value of `schema` (a components name or an inline schema), the same for the same key. */
  make(schema: string | Json, key: string): unknown {
    const root: Json =
      typeof schema === 'string' ? { $ref: `#/components/schemas/${schema}` } : schema
    const value = generateSync(
      { ...root, components: { schemas: this.reachedFrom(root) } },
      // Deep enough that embedded records (an evaluation's parent, a solution's flows) come whole.
      { seed: seedFor(this.seed, key), maxDepth: 10, formats: { [OFFSET_DATE_TIME]: offsetTime } },
    )
    this.pinOrganization(value)
    return value
  }

  private reachedFrom(root: Json): Json {
    const key = JSON.stringify(root)
    let schemas = this.reached.get(key)
    if (!schemas) {
      const found: Json = {}
      const walk = (node: unknown): void => {
        if (Array.isArray(node)) {
          for (const item of node) walk(item)
        } else if (isObject(node)) {
          const ref = typeof node.$ref === 'string' ? node.$ref.split('/').at(-1) : undefined
          if (ref !== undefined && !(ref in found)) {
            found[ref] = this.schemas[ref]
            walk(found[ref])
          }
          for (const value of Object.values(node)) walk(value)
        }
      }
      walk(root)
      schemas = found
      this.reached.set(key, schemas)
    }
    return schemas
  }

  /** Whether `value` is what the (widened) contract allows for `schemaName`. */
  conforms(schemaName: string, value: unknown): boolean {
    if (!ajv) {
      ajv = new Ajv2020({ strict: false, allErrors: false, inlineRefs: false })
      addFormats(ajv)
      ajv.addSchema({ $id: 'contract', components: { schemas: this.contract.schemas } })
    }
    let validate = validators.get(schemaName)
    if (!validate) {
      validate = ajv.compile({ $ref: `contract#/components/schemas/${schemaName}` })
      validators.set(schemaName, validate)
    }
    return validate(value)
  }

  /** Every organization named is the one asked for (null stays null: a public model). */
  private pinOrganization(value: unknown): void {
    if (Array.isArray(value)) {
      for (const item of value) this.pinOrganization(item)
    } else if (isObject(value)) {
      if (typeof value.org_id === 'string') value.org_id = this.orgId
      for (const child of Object.values(value)) this.pinOrganization(child)
    }
  }
}

/**
 * The ids the request's path names: the record's own id (or code) when the path ends with it,
 * its parent's wherever the record has the parent's field.
 */
export function pinPath(record: unknown, params: Record<string, string>, ownId: boolean): void {
  if (!isObject(record)) return
  const names = Object.keys(params)
  const last = names.at(-1)
  for (const name of names) {
    const field = PARAM_FIELDS[name] ?? name
    if (name === last && ownId) {
      record[name === 'code' ? 'code' : 'id'] = params[name]
    } else if (field in record) {
      record[field] = params[name]
    }
  }
}

/** The record's direct children name it as their parent (`model_id` of a model's inputs). */
export function pinChildren(record: unknown, schemaName: string): void {
  if (!isObject(record) || typeof record.id !== 'string') return
  const field = `${snake(schemaName)}_id`
  for (const child of Object.values(record)) {
    for (const item of Array.isArray(child) ? child : [child]) {
      if (isObject(item) && field in item) item[field] = record.id
    }
  }
}
