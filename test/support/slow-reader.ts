/**
 * A client that reads a streamed response at its own pace: the response opened with node:http (fetch
 * reads on by itself), and paused at its first chunk, so the server writes on only while the socket's and
 * the kernel's buffers take it.
 */
import { request, type IncomingMessage } from 'node:http'

export function openResponse(url: URL, method = 'GET'): Promise<IncomingMessage> {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(url, { method }, resolve)
    req.on('error', reject)
    req.end()
  })
}

export interface PausedResponse {
  /** Reads on to the end; the whole body, the first chunk included. Rejects when the body ends broken. */
  resume(): Promise<Buffer>
}

/** Resolves once the first chunk has come, with the response paused there. */
export async function pausedAtFirstChunk(res: IncomingMessage): Promise<PausedResponse> {
  const chunks: Buffer[] = []
  await new Promise<void>((resolve) =>
    res.on('data', (c: Buffer) => {
      chunks.push(c)
      if (chunks.length === 1) {
        res.pause()
        resolve()
      }
    }),
  )
  return {
    async resume() {
      const ended = new Promise<void>((resolve, reject) => {
        res.once('end', resolve)
        res.once('error', reject)
        res.once('close', () => {
          if (!res.complete) reject(new Error('the response ended before its last chunk'))
        })
      })
      res.resume()
      await ended
      return Buffer.concat(chunks)
    },
  }
}
