/**
 * A raw HTTP/1.1 request for the security tests (node:http lets a test set Host and send bytes that are
 * not UTF-8, which fetch does not), answered with its status and its stable code: the native error
 * body's, etcd's gateway's kvlog-code header, or a Kubernetes Status reason.
 */
import { request as httpRequest } from 'node:http'

export interface Answer {
  status: number
  code: string | undefined
  text: string
}

export function send(base: string, method: string, path: string, headers: Record<string, string>, body?: string | Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method, headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (text += c))
      res.on('end', () => {
        let code = res.headers['kvlog-code'] as string | undefined
        try {
          const b = JSON.parse(text) as { error?: { code?: string }; reason?: string }
          code ??= b.error?.code ?? b.reason
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, code, text })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}
