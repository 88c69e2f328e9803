/**
 * The Kubernetes-style resource API (docs/api.md, "Resource API (Kubernetes-style)"), served on the native HTTP listener:
 * `/api`, `/apis`, `/version`, discovery, CRUD, list and watch (HTTP stream and WebSocket) of objects
 * stored as JSON at /registry/[group/]resource/[namespace/]name.
 *
 * registerResourceApi() is called once by the composition root (apiserver/server.ts) before listen.
 * Its routes live in their own fastify scope, so errors there are Kubernetes Status objects while the
 * native API keeps its own error shape.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../../config/index.js'
import type { Log } from '../../log/backend.js'
import { isKvlogError, KvlogError, type ErrorCode } from '../../log/errors.js'
import { setStoredObjectMaxDepth } from '../json-limits.js'
import type { Query } from '../params.js'
import type { WatchService } from '../watch/service.js'
import { onUpgrade } from '../watch/upgrade.js'
import { currentCaller } from '../auth/guarded-log.js'
import { resolveResource, type ApiContext, type ResourceRequest } from './context.js'
import { CrdSync } from './crds.js'
import { apiGroup, apiGroupList, apiResourceList, apiVersions, versionInfo } from './discovery.js'
import { openApiGroupVersion, openApiRoot } from './openapi.js'
import { PATCH_TYPES } from './patch.js'
import { Namespaces } from './namespaces.js'
import { parsePath } from './paths.js'
import { decodeProtobufBody, PROTOBUF_TYPE, ProtobufBody, unsupportedProtobuf } from './protobuf.js'
import { encodeProtobufObject, prefersProtobuf } from './protobuf-encode.js'
import type { K8sObject } from './k8s-object.js'
import { Registry } from './registry.js'
import { deleteObject } from './routes/delete.js'
import { deleteCollection } from './routes/delete-collection.js'
import { getObject, listCollection } from './routes/read.js'
import { serveScale } from './routes/scale.js'
import { isWatch, serveHttpWatch, webSocketWatchHandler } from './routes/watch.js'
import { createObject, patchObject, replaceObject } from './routes/write.js'
import { forbidden, methodNotAllowed, noSuchPath, statusOf, unauthorized } from './status.js'
import { ObjectStore } from './store.js'
import { wantsTable } from './table.js'

export interface ResourceApiDeps {
  /** What requests read and write through: checked against the caller's permissions. */
  log: Log
  /**
   * The same store unchecked, read-only, for the server's own reads (the CRD registry follows every
   * CRD); requests never go through it.
   */
  systemLog: Pick<Log, 'range' | 'subscribe'>
  /**
   * The store unchecked, for the one write the server does on its own at start with no request and so no
   * caller: finishing namespaces left Terminating (their objects deleted, then the namespace).
   */
  startupLog: Log
  watch: WatchService
  config: Config
  callerOf: ApiContext['callerOf']
  authorizeRead: ApiContext['authorizeRead']
  whileAuthorized: ApiContext['whileAuthorized']
}

const API_PATH = /^\/apis?(\/|$)/

export function registerResourceApi(app: FastifyInstance, deps: ResourceApiDeps): void {
  const { log, systemLog, startupLog, watch, config, callerOf, authorizeRead, whileAuthorized } = deps
  setStoredObjectMaxDepth(config.maxJsonDepth)
  const registry = new Registry()
  const crds = new CrdSync(systemLog, registry)
  const ctx: ApiContext = {
    log,
    hub: watch.hub,
    registry,
    namespaces: new Namespaces(log, registry, config.resourceNamespaceMustExist),
    store: new ObjectStore(log, (rt, name, obj, revision) => crds.onWrite(rt, name, obj, revision)),
    bookmarkInterval: config.watchProgressInterval,
    listChunkBytes: config.maxRequestBytes,
    deleteCollectionPage: config.resourceDeleteCollectionPage,
    callerOf,
    authorizeRead,
    whileAuthorized,
  }

  void app.register(async (scope) => {
    await crds.start()
    // A failure here leaves those namespaces Terminating (creates there stay refused); it must not stop the server.
    // The server's own work: on the unchecked log (no request, so no caller to check).
    await new Namespaces(startupLog, registry, config.resourceNamespaceMustExist)
      .resume()
      .catch((err: unknown) => app.log.error({ err }, 'finishing terminating namespaces failed'))
    scope.addHook('onClose', async () => crds.stop())
    scope.setErrorHandler(statusErrorHandler)
    // application/json is the listener's parser (http/json-body.ts), which also takes a DELETE with no body.
    scope.addContentTypeParser([...PATCH_TYPES], { parseAs: 'string' }, scope.getDefaultJsonParser('error', 'error'))
    scope.addContentTypeParser(PROTOBUF_TYPE, { parseAs: 'buffer' }, (_request, body, done) => done(null, new ProtobufBody(body as Buffer)))
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const
    for (const url of ['/api', '/api/*', '/apis', '/apis/*']) {
      scope.route({ method: [...methods], url, handler: (request, reply) => handle(ctx, request, reply) })
    }
    scope.get('/version', async () => versionInfo())
    scope.get('/openapi/v3', async () => openApiRoot(registry))
    scope.get('/openapi/v3/*', async (request) => openApiGroupVersion(registry, request.url.split('?')[0].slice('/openapi/v3/'.length)))
  })

  onUpgrade(
    app.server,
    (path) => API_PATH.test(path),
    webSocketWatchHandler(
      ctx,
      {
        maxPayload: config.wsMaxPayload,
        heartbeatInterval: config.wsHeartbeatInterval,
        maxBufferedBytes: config.wsMaxBufferedBytes,
      },
      (request) => {
        const url = new URL(request.url ?? '/', 'http://localhost')
        const parsed = parsePath(url.pathname)
        if (parsed.type !== 'resource') throw noSuchPath()
        const query: Query = Object.fromEntries(url.searchParams)
        const req = resolveResource(registry, parsed, query)
        if (request.method !== 'GET' || !isWatch(query) || req.subresource !== undefined) throw methodNotAllowed()
        return req
      },
    ),
  )
}

async function handle(ctx: ApiContext, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const path = request.url.split('?')[0]
  const query = request.query as Query
  const parsed = parsePath(path)
  if (parsed.type === 'discovery') {
    if (request.method !== 'GET') throw methodNotAllowed()
    switch (parsed.what) {
      case 'api':
        return apiVersions(request.headers.host ?? '')
      case 'apis':
        return apiGroupList(ctx.registry)
      case 'group':
        return apiGroup(ctx.registry, parsed.group)
      case 'groupVersion':
        return apiResourceList(ctx.registry, parsed.group, parsed.version)
    }
  }
  const req = resolveResource(ctx.registry, parsed, query)
  try {
    return await serve(ctx, req, request, reply)
  } catch (err) {
    if (!isKvlogError(err, 'PERMISSION_DENIED')) throw err
    throw forbidden(
      req.target.rt,
      verbOf(request.method, req.name, isWatch(query)),
      currentCaller().user ?? 'system:anonymous',
      req.target.namespace,
      req.name,
    )
  }
}

/** The Kubernetes verb of a request, for its 403 message. */
function verbOf(method: string, name: string | undefined, watch: boolean): string {
  switch (method) {
    case 'GET':
      return watch ? 'watch' : name === undefined ? 'list' : 'get'
    case 'POST':
      return 'create'
    case 'PUT':
      return 'update'
    case 'PATCH':
      return 'patch'
    default:
      return name === undefined ? 'deletecollection' : 'delete'
  }
}

async function serve(ctx: ApiContext, req: ResourceRequest, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const query = request.query as Query
  const table = wantsTable(request.headers.accept)
  const body = request.body
  // A protobuf body is an object only for creates and updates of kinds that have a message (protobuf.ts).
  const object = () => (body instanceof ProtobufBody ? decodeProtobufBody(body.bytes, req.target.rt, req.target.version) : body)
  const notProtobuf = () => {
    if (body instanceof ProtobufBody) throw unsupportedProtobuf()
    return body
  }
  if (req.subresource !== undefined && !['GET', 'PUT', 'PATCH'].includes(request.method)) throw methodNotAllowed()
  // One object, as protobuf when the client prefers it and the object fits the messages (protobuf-encode.ts).
  const answer = (obj: K8sObject): K8sObject | Buffer => {
    const bytes = prefersProtobuf(request.headers.accept) ? encodeProtobufObject(req.target.rt, obj) : undefined
    if (bytes === undefined) return obj
    void reply.type(PROTOBUF_TYPE)
    return bytes
  }
  if (req.subresource === 'scale' && !isWatch(query))
    return serveScale(ctx, req, request.method, notProtobuf(), request.headers['content-type'])
  switch (request.method) {
    case 'GET':
      if (isWatch(query)) {
        if (req.subresource !== undefined) throw methodNotAllowed()
        return serveHttpWatch(ctx, req, table, reply)
      }
      if (req.name === undefined) return listCollection(ctx, req, table, reply)
      return table ? getObject(ctx, req, true) : answer(await ctx.store.get(req.target, req.name))
    case 'POST': {
      const created = await createObject(ctx, req, object())
      reply.code(201)
      return answer(created)
    }
    case 'PUT':
      return answer(await replaceObject(ctx, req, object()))
    case 'PATCH':
      return answer(await patchObject(ctx, req, notProtobuf(), request.headers['content-type']))
    case 'DELETE':
      return req.name === undefined ? deleteCollection(ctx, req, notProtobuf(), reply) : deleteObject(ctx, req, notProtobuf())
    default:
      throw methodNotAllowed()
  }
}

/** fastify's own client errors (bad JSON, body too large, unknown content type) as our codes. */
function clientErrorCode(err: FastifyError): ErrorCode | undefined {
  const status = err.statusCode
  if (status === undefined || status < 400 || status >= 500) return undefined
  if (status === 413) return 'REQUEST_TOO_LARGE'
  if (status === 415) return 'UNSUPPORTED_MEDIA_TYPE'
  return 'INVALID_ARGUMENT'
}

function statusErrorHandler(err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
  let e: unknown = err
  if (isKvlogError(err, 'UNAUTHENTICATED')) e = unauthorized()
  else if (!isKvlogError(err)) {
    const code = clientErrorCode(err as FastifyError)
    if (code !== undefined) e = new KvlogError(code, err.message)
    else request.log.error({ err }, 'unexpected error')
  }
  const status = statusOf(e)
  void reply.status(status.code).send(status)
}
