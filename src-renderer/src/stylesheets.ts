/**
 * Every stylesheet of the app, loaded with the start screen as one file, in this order. The
 * screens that come in chunks of their own (shell/lazy.tsx) still import theirs, but they are
 * already here: a chunk brings JavaScript only. The order is the cascade the rules were written
 * and checked in (of two rules of equal weight, the later wins), the one the single bundle had:
 * the graph library's defaults before the editor's rules (flows.css), and styles.css, the app's
 * own look, last. A chunk's own stylesheet would come after styles.css, whenever it loads.
 */
import './assets/assets.css'
import '@xyflow/react/dist/style.css'
import './flows/flows.css'
import './evaluations/evaluations.css'
import './runs/page/runPage.css'
import './runs/list/runs-list.css'
import './settings/settings.css'
import './styles.css'
