/**
 * Alarms (etcd's): GET /v1/alarms lists them; DELETE /v1/alarms/NOSPACE clears the space alarm by hand
 * (it also clears itself once the database is back under the quota; if it is still over, the next check
 * raises it again).
 */
import type { FastifyInstance } from 'fastify'
import type { Log } from '../../../log/backend.js'
import { KvlogError } from '../../../log/errors.js'
import { onlyFields, type Query } from '../../params.js'

export function alarmRoutes(app: FastifyInstance, log: Log): void {
  app.get('/v1/alarms', async (request) => {
    onlyFields(request.query as Query, [], '')
    return { header: { revision: log.revision }, alarms: log.alarms() }
  })

  app.delete('/v1/alarms/:alarm', async (request) => {
    onlyFields(request.query as Query, [], '')
    const alarm = (request.params as { alarm: string }).alarm
    if (alarm !== 'NOSPACE') throw new KvlogError('NOT_FOUND', `no alarm ${alarm}`)
    await log.setAlarm('NOSPACE', false)
    return { header: { revision: log.revision }, alarms: log.alarms() }
  })
}
