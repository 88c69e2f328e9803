/**
 * Passwords on the command line's terminal: asked for on the TTY without echo (never read from a pipe,
 * where stdin carries values and txns). Where there is no terminal, a missing password is a usage error
 * naming the ways to give one.
 */
import { UsageError } from './args.js'

export async function askSecret(prompt: string, missing: string): Promise<string> {
  const stdin = process.stdin
  if (!stdin.isTTY) throw new UsageError(`${missing} (no terminal to ask on)`)
  // No echo from before the prompt shows: what is typed once it is seen is never printed.
  stdin.setRawMode(true)
  process.stderr.write(prompt)
  stdin.setEncoding('utf8')
  stdin.resume()
  return new Promise<string>((resolve, reject) => {
    let secret = ''
    const finish = () => {
      stdin.off('data', onData)
      stdin.setRawMode(false)
      stdin.pause()
      process.stderr.write('\n')
    }
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') {
          finish()
          return resolve(secret)
        }
        if (ch === '\u0003' || ch === '\u0004') {
          finish()
          return reject(new UsageError('no password given'))
        }
        if (ch === '\u007f' || ch === '\b') secret = secret.slice(0, -1)
        else secret += ch
      }
    }
    stdin.on('data', onData)
  })
}
