import { useState } from 'react'
import type { RemixSource } from '../../../../src-shared/domain/remix'
import type { OutputExportRequest } from '../../../../src-shared/ipc/contracts/outputs'
import { downloadBytes } from '../../flows/download'
import { errorText } from '../../shell/errorWords'

/**
 * "Download" (issue 20): the output saved as a file named for its flow, with the record of
 * where it came from inside, so the picture can be opened in the editor again anywhere.
 */
export function DownloadOutput({
  request,
  className = 'small-button',
}: {
  request: OutputExportRequest
  className?: string
}) {
  const [saving, setSaving] = useState(false)
  const [problem, setProblem] = useState<string | null>(null)
  const save = () => {
    const api = window.atelier
    if (!api) return
    setSaving(true)
    setProblem(null)
    void api.outputs.export(request).then((result) => {
      setSaving(false)
      if (!result.ok) {
        setProblem(errorText(result.error))
        return
      }
      downloadBytes(result.value.fileName, result.value.base64, result.value.mediaType)
    })
  }
  return (
    <>
      <button
        type="button"
        className={className}
        title="Save this output as a file, with the record of where it came from inside"
        disabled={saving}
        onClick={save}
      >
        {saving ? 'Saving…' : 'Download'}
      </button>
      {problem ? (
        <span className="error-text" role="alert">
          {problem}
        </span>
      ) : null}
    </>
  )
}

/** The output a remix source names, as a download asks for it; null for an asset or a file. */
export function downloadOf(source: RemixSource | undefined): OutputExportRequest | null {
  if (!source) return null
  if ('runId' in source) return { runId: source.runId, index: source.index ?? 0 }
  if ('flowRunId' in source) return source
  return null
}
