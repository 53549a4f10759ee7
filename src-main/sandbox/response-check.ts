import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { Contract } from './contract'

type Json = Record<string, unknown>

/**
 * Checks what the sandbox answers against the contract's response schemas. Switched on in
 * tests (`checkResponses`), so that every test of every area is also a contract test: a
 * response that drifts from resources/openapi.yaml fails loudly instead of passing unnoticed.
 */
export class ResponseChecker {
  private readonly ajv: Ajv2020
  private readonly cache = new Map<string, ValidateFunction | null>()

  constructor(private readonly contract: Contract) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true })
    addFormats(this.ajv)
    const components = (contract.document.components as { schemas: Json }).schemas
    this.ajv.addSchema({ $id: 'contract', components: { schemas: components } })
  }

  private validatorFor(path: string, method: string, status: number): ValidateFunction | null {
    const cacheKey = `${method} ${path} ${status}`
    const cached = this.cache.get(cacheKey)
    if (cached !== undefined) return cached
    const document = this.contract.document
    const operation = (document.paths as Record<string, Record<string, Json>>)[path]?.[
      method.toLowerCase()
    ]
    const responses = (operation?.responses ?? {}) as Record<string, Json>
    let response = responses[String(status)] ?? responses.default
    const ref = response?.$ref
    if (typeof ref === 'string') {
      response = (document.components as { responses: Record<string, Json> }).responses[
        ref.replace('#/components/responses/', '')
      ]
    }
    const schema = (response?.content as Record<string, { schema?: Json }> | undefined)?.[
      'application/json'
    ]?.schema
    const validator = schema
      ? this.ajv.compile(
          JSON.parse(
            JSON.stringify(schema).replaceAll('"#/components/', '"contract#/components/'),
          ) as Json,
        )
      : null
    this.cache.set(cacheKey, validator)
    return validator
  }

  /** Problems with a JSON body answered for an operation (its OpenAPI path template), if any. */
  check(path: string, method: string, status: number, body: unknown): string[] {
    const validator = this.validatorFor(path, method, status)
    if (!validator || validator(body)) return []
    return (validator.errors ?? []).map(
      (error) => `${error.instancePath || '(body)'} ${error.message ?? 'is not valid'}`,
    )
  }
}
