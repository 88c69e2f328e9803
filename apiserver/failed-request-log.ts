/**
 * The "request failed" lines of both doors (the native door's error responses, the etcd door's failed
 * calls) share one budget of `perSecond` lines in any one second. A flood of bad requests — a thousand
 * wrong logins a second, a client retrying a refused call in a loop — would otherwise write a line each,
 * and writing the log would become the server's work. Lines over the budget are counted instead, and the
 * count is logged in one warn line when the second ends:
 *
 *   WARN  failed requests not logged notLogged=912 perSecond=100
 *
 * perSecond 0 logs every line.
 */
export interface LineLogger {
  info(fields: object, message: string): void
  warn(fields: object, message: string): void
}

const WINDOW_MS = 1000

export class FailedRequestLog {
  private windowStart = -Infinity
  private written = 0
  private notLogged = 0
  /** The logger the last line over the budget would have gone to: the count goes there. */
  private summaryTo: LineLogger | undefined
  private summary: NodeJS.Timeout | undefined

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** `logger` with its lines counted against the budget. */
  limited(logger: LineLogger): LineLogger {
    return {
      info: (fields, message) => this.write(logger, 'info', fields, message),
      warn: (fields, message) => this.write(logger, 'warn', fields, message),
    }
  }

  /** Logs the count of lines not logged now, if any (the server calls it when it stops). */
  flush(): void {
    if (this.summary !== undefined) clearTimeout(this.summary)
    this.summary = undefined
    if (this.notLogged > 0) this.summaryTo?.warn({ notLogged: this.notLogged, perSecond: this.perSecond }, 'failed requests not logged')
    this.notLogged = 0
  }

  private write(logger: LineLogger, level: 'info' | 'warn', fields: object, message: string): void {
    const t = this.now()
    if (t - this.windowStart >= WINDOW_MS) {
      this.flush()
      this.windowStart = t
      this.written = 0
    }
    if (this.perSecond === 0 || this.written < this.perSecond) {
      this.written++
      logger[level](fields, message)
      return
    }
    this.notLogged++
    this.summaryTo = logger
    this.summary ??= setTimeout(() => this.flush(), Math.max(0, this.windowStart + WINDOW_MS - t)).unref()
  }
}
