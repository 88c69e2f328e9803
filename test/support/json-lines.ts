/**
 * Reads a streamed HTTP body (fetch's res.body) as JSON lines, one parsed value per non-empty line.
 */
export async function* jsonLines<T>(body: ReadableStream<Uint8Array> | null): AsyncGenerator<T> {
  if (body === null) return
  const decoder = new TextDecoder()
  let buffer = ''
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true })
    let nl: number
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl)
      buffer = buffer.slice(nl + 1)
      if (line.trim() !== '') yield JSON.parse(line) as T
    }
  }
}
