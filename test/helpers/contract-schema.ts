// Validators for the schemas of the service contract (resources/openapi.yaml), for tests that check
// records against it. `$ref`s resolve against the whole document's components.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import { parse } from 'yaml'

const YAML_PATH = fileURLToPath(new URL('../../resources/openapi.yaml', import.meta.url))
/** The id the contract's components are registered under; refs are `${DOCUMENT_ID}#/components/...`. */
const DOCUMENT_ID = 'https://atelier.invalid/contract/openapi.yaml'

interface ContractDocument {
  components?: { schemas?: Record<string, unknown> }
}

let ajv: Ajv2020 | undefined
let schemaNames: Set<string> | undefined
const validators = new Map<string, ValidateFunction>()

function instance(): { ajv: Ajv2020; names: Set<string> } {
  if (!ajv || !schemaNames) {
    const doc = parse(readFileSync(YAML_PATH, 'utf8')) as ContractDocument
    const schemas = doc.components?.schemas ?? {}
    ajv = new Ajv2020({ strict: false, allErrors: true })
    addFormats(ajv)
    // Register the components under the document id, so that the document's own
    // `#/components/schemas/...` references resolve inside it.
    ajv.addSchema({ $id: DOCUMENT_ID, components: { schemas } })
    schemaNames = new Set(Object.keys(schemas))
  }
  return { ajv, names: schemaNames }
}

/** The compiled validator of `components.schemas[schemaName]` (cached). */
export function validatorFor(schemaName: string): ValidateFunction {
  const cached = validators.get(schemaName)
  if (cached) return cached
  const { ajv, names } = instance()
  if (!names.has(schemaName)) {
    throw new Error(`resources/openapi.yaml has no schema named ${schemaName}`)
  }
  const validate = ajv.compile({ $ref: `${DOCUMENT_ID}#/components/schemas/${schemaName}` })
  validators.set(schemaName, validate)
  return validate
}

/** Readable errors, e.g. `/inputs/0/id must match format "uuid"`. */
export function describeErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map(
    (error) => `${error.instancePath || '/'} ${error.message ?? error.keyword}`,
  )
}

/** The problems of `value` against the named schema: empty when it conforms. */
export function contractErrors(schemaName: string, value: unknown): string[] {
  const validate = validatorFor(schemaName)
  return validate(value) ? [] : describeErrors(validate.errors)
}
