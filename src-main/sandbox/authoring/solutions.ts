import type {
  ModelSolutionLink,
  Solution,
  SolutionFlowLink,
  SolutionWorkflowLink,
  Workflow,
} from '../../../src-shared/api'
import { notFound } from '../errors'
import { getOne, listOf } from '../handlers/common'
import type { Handlers } from '../handlers/types'
import type { ListParams } from '../list'
import { findModel } from '../models'
import type { SandboxServices } from '../services'
import { bareFlow, type StoredFlow } from './present'
import { COLLECTIONS } from './records'

const SOLUTION_NOT_FOUND = 'SOLUTION_NOT_FOUND'

type LinkBase = { id: string; solution_id: string; sort_order: number; created_at: string }

/** Solutions and their links (global, read-only), and the built-in nodes. */
export function solutionHandlers(services: SandboxServices): Handlers {
  const { store, contract } = services

  const solution = (id: string, orgId: string) =>
    store.get<Solution>(COLLECTIONS.solutions, id, orgId, { includeGlobal: true }) ?? null

  const requireSolution = (id: string, orgId: string) => {
    if (!solution(id, orgId)) throw notFound('The solution', SOLUTION_NOT_FOUND)
  }

  /**
   * A page of links with the solution and the linked record embedded (not with a `fields`
   * projection, which asks for scalar fields only). The link's own fields are picked out, so the
   * stored row's updated_at stays inside.
   */
  const links = (
    context: { params: { solution_id: string }; query: ListParams; auth: { orgId: string } },
    collection: string,
    schema: string,
    present: (link: never, orgId: string) => object,
  ) => {
    const { solution_id: solutionId } = context.params
    const orgId = context.auth.orgId
    if (solutionId !== 'any') requireSolution(solutionId, orgId)
    const page = store.list<LinkBase>(
      { collection, orgId, includeGlobal: true, parentId: solutionId },
      context.query,
      { fields: contract.scalarFields(schema), defaultSort: 'sort_order:asc' },
    )
    if (context.query.fields) return page as never
    return { ...page, items: page.items.map((link) => present(link as never, orgId)) } as never
  }

  const presentFlowLink = (link: SolutionFlowLink, orgId: string): SolutionFlowLink => {
    const flow = store.get<StoredFlow>(COLLECTIONS.flowTemplates, link.flow_id, orgId, {
      includeGlobal: true,
    })
    return {
      id: link.id,
      solution_id: link.solution_id,
      flow_id: link.flow_id,
      sort_order: link.sort_order,
      created_at: link.created_at,
      solution: solution(link.solution_id, orgId),
      flow: flow ? bareFlow(flow) : null,
    }
  }

  const presentModelLink = (link: ModelSolutionLink, orgId: string): ModelSolutionLink => ({
    id: link.id,
    solution_id: link.solution_id,
    model_id: link.model_id,
    sort_order: link.sort_order,
    created_at: link.created_at,
    solution: solution(link.solution_id, orgId),
    model: findModel(link.model_id) ?? null,
  })

  const presentWorkflowLink = (
    link: SolutionWorkflowLink,
    orgId: string,
  ): SolutionWorkflowLink => ({
    id: link.id,
    solution_id: link.solution_id,
    wfengine_workflow_id: link.wfengine_workflow_id,
    sort_order: link.sort_order,
    created_at: link.created_at,
    solution: solution(link.solution_id, orgId),
    workflow:
      store.get<Workflow>(COLLECTIONS.workflows, link.wfengine_workflow_id, orgId, {
        includeGlobal: true,
      }) ?? null,
  })

  return {
    listSolutions: listOf({
      collection: COLLECTIONS.solutions,
      schema: 'Solution',
      includeGlobal: true,
      defaultSort: 'sort_order:asc',
    }),
    getSolution: getOne({
      collection: COLLECTIONS.solutions,
      idParam: 'id',
      what: 'The solution',
      includeGlobal: true,
      notFoundCode: SOLUTION_NOT_FOUND,
    }),
    listSolutionFlows: (context) =>
      links(context, COLLECTIONS.solutionFlows, 'SolutionFlowLink', presentFlowLink),
    listSolutionWorkflows: (context) =>
      links(context, COLLECTIONS.solutionWorkflows, 'SolutionWorkflowLink', presentWorkflowLink),
    // The spec: with `any`, solution models skip the parent check; a named solution must exist.
    listSolutionModels: (context) =>
      links(context, COLLECTIONS.solutionModels, 'ModelSolutionLink', presentModelLink),
    getSolutionModel: ({ params, auth }) => {
      const link = store.get<ModelSolutionLink & { updated_at: string }>(
        COLLECTIONS.solutionModels,
        params.id,
        auth.orgId,
        {
          includeGlobal: true,
        },
      )
      if (!link || (params.solution_id !== 'any' && link.solution_id !== params.solution_id)) {
        if (params.solution_id !== 'any') requireSolution(params.solution_id, auth.orgId)
        throw notFound('The model of this solution', 'SOLUTION_MODEL_NOT_FOUND')
      }
      return presentModelLink(link, auth.orgId)
    },

    listBuiltinNodes: listOf({
      collection: COLLECTIONS.builtinNodes,
      schema: 'BuiltinNode',
      includeGlobal: true,
      defaultSort: 'sort_order:asc',
    }),
    getBuiltinNode: getOne({
      collection: COLLECTIONS.builtinNodes,
      idParam: 'code',
      what: 'The built-in node',
      includeGlobal: true,
      notFoundCode: 'BUILTIN_NODE_NOT_FOUND',
    }),
  }
}
