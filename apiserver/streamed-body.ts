/**
 * A response body written as it is produced, for fastify's reply.send: the chunks of an async iterator,
 * the next one asked for only once the socket has taken those before (backpressure), so a response holds
 * about one chunk in the server whatever it adds up to. The body goes out with chunked transfer encoding.
 *
 * The first chunk is produced before the body is returned: an error there reaches the route's error
 * handler and is answered as a normal error response. An error in a later chunk destroys the stream and
 * fastify destroys the connection: the response ends without the terminating chunk, which a client sees
 * as a broken body. A client that goes away ends the iterator.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { Readable } from 'node:stream'

export async function streamedBody(chunks: AsyncIterator<string, void, undefined>): Promise<Readable> {
  // Later chunks are produced from the socket's events: in the request's context (its caller), as the first.
  const inRequest = AsyncLocalStorage.snapshot()
  const first = await chunks.next()
  let pending: string | undefined = first.done === true || first.value === '' ? undefined : first.value
  let ended = first.done === true
  return new Readable({
    read() {
      if (pending !== undefined) {
        const chunk = pending
        pending = undefined
        this.push(chunk)
        return
      }
      if (ended) {
        this.push(null)
        return
      }
      // An empty chunk is skipped: push('') would not ask for the next one.
      const pull = (): void => {
        inRequest(() => chunks.next()).then(
          (r) => {
            if (r.done === true) {
              ended = true
              this.push(null)
            } else if (r.value === '') pull()
            else this.push(r.value)
          },
          (err: unknown) => this.destroy(err as Error),
        )
      }
      pull()
    },
    destroy(err, callback) {
      ended = true
      chunks.return?.().then(
        () => callback(err),
        () => callback(err),
      )
    },
  })
}
