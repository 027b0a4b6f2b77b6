/**
 * HTTP servers on 127.0.0.1 for the suites that run a real client (a rendered script, a real binary) against a
 * stand-in: the fake API servers and the kube-state-metrics exposition, and free ports for the binaries.
 */
import * as http from 'http';
import * as net from 'net';

/** A port nothing listens on now (for a binary that takes its listen address, or a URL that must refuse). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

export interface Loopback {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** Stops listening and closes every open connection (a client's keep-alive one too), so the suite ends clean. */
  close(): Promise<void>;
}

/** Serves `handle` on 127.0.0.1 at a port the system picks; each request is handed over with its whole body. */
export async function serveLoopback(handle: (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void): Promise<Loopback> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => handle(req, body, res));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
