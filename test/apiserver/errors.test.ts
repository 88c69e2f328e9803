import { readFileSync } from 'node:fs'
import { expect } from 'chai'
import { ERROR_STATUS, GRPC } from '../../apiserver/errors.js'
import { ALL_ERROR_CODES, ERROR_CODES } from '../../log/errors.js'

const docs = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8')
const grpcName = new Map(Object.entries(GRPC).map(([name, code]) => [code as number, name]))

/** The docs table rows keyed by code: [http, grpc, k8s reason]. */
function docRows(): Map<string, string[]> {
  const rows = new Map<string, string[]>()
  for (const line of docs.split('\n')) {
    const m = /^\| `([A-Z_]+)` \| (\d+) \| ([A-Z_]+) \((\d+)\) \| (\w+) \|/.exec(line)
    if (m) rows.set(m[1], [m[2], m[3], m[4], m[5]])
  }
  return rows
}

describe('error registry', () => {
  it('maps every code to an HTTP status, a gRPC status and a Kubernetes reason', () => {
    expect(Object.keys(ERROR_STATUS).sort()).to.deep.equal([...ALL_ERROR_CODES].sort())
    for (const code of ALL_ERROR_CODES) {
      const s = ERROR_STATUS[code]
      expect(s.http, code).to.be.within(400, 599)
      expect(grpcName.has(s.grpc), code).to.equal(true)
      expect(s.k8sReason, code).to.match(/^[A-Z][A-Za-z]+$/)
      expect(ERROR_CODES[code], code).to.be.a('string').and.not.equal('')
    }
  })

  it('is listed in docs/errors.md with exactly the mapping in apiserver/errors.ts', () => {
    const rows = docRows()
    expect([...rows.keys()].sort()).to.deep.equal([...ALL_ERROR_CODES].sort())
    for (const code of ALL_ERROR_CODES) {
      const s = ERROR_STATUS[code]
      expect(rows.get(code), code).to.deep.equal([String(s.http), grpcName.get(s.grpc), String(s.grpc), s.k8sReason])
    }
  })

  it('maps COMPACTED like etcd and Kubernetes do (OUT_OF_RANGE, 410 Expired)', () => {
    expect(ERROR_STATUS.COMPACTED).to.deep.equal({ http: 410, grpc: GRPC.OUT_OF_RANGE, k8sReason: 'Expired' })
  })
})
