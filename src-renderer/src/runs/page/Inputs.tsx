import { plural } from '../../../../src-shared/domain/plural'
import type { Run } from '../../../../src-shared/api'
import { findMedia } from './media'
import { MediaStrip } from './Outputs'
import { valueWords } from './words'

/** The parameters as dispatched, in a table; pictures among them as thumbnails. */
export function Inputs({ run }: { run: Run }) {
  const entries = Object.entries(run.input)
  const media = findMedia(run.input)
  const mediaKeys = new Set(media.map((m) => m.path.split(/[.[]/)[0]))
  return (
    <section className="card run-card" aria-labelledby="run-inputs-title">
      <div className="card-head">
        <h2 id="run-inputs-title">Inputs</h2>
        <span className="muted">{plural(entries.length, 'parameter')}</span>
      </div>
      {media.length > 0 ? <MediaStrip media={media} label="Input media" size={128} /> : null}
      {entries.length === 0 ? (
        <p className="muted run-empty">No parameters.</p>
      ) : (
        <table className="run-params">
          <tbody>
            {entries.map(([key, value]) => (
              <tr key={key}>
                <th scope="row">{key}</th>
                <td>{mediaKeys.has(key) ? 'shown above' : valueWords(value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
