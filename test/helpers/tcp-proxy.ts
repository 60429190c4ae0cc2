import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './redis-server.js';

/**
 * A TCP proxy of the test's own in front of a shared server (PostgreSQL): cutting it is an
 * outage for the Trove behind it, while the shared server itself keeps running for everyone else.
 */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private stalled = false;

  private constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(await freePort(), target);
    await proxy.open();
    return proxy;
  }

  /** Listens (again) and forwards; when already listening, only ends a stall. */
  async open(): Promise<void> {
    this.stalled = false;
    if (this.server) return;
    const server = createServer((client) => {
      this.sockets.add(client);
      client.on('close', () => this.sockets.delete(client));
      client.on('error', () => client.destroy());
      if (this.stalled) return; // accepted, never answered
      const upstream = createConnection(this.target);
      this.sockets.add(upstream);
      upstream.on('close', () => this.sockets.delete(upstream));
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
    this.server = server;
    server.listen(this.port, '127.0.0.1');
    await once(server, 'listening');
  }

  /** Refuses new connections and drops the open ones: the database is down. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  /** Drops the open connections and accepts new ones without ever answering: the database hangs. */
  async stall(): Promise<void> {
    await this.cut();
    await this.open();
    this.stalled = true;
  }

  async close(): Promise<void> {
    await this.cut();
  }
}
