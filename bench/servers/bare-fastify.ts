import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { portFromEnv, readOne, type ProfileUser } from './envelope.js';

/**
 * Scenario (a), the ceiling: the profile answer with no session, no database and no plugins.
 * It keeps a response schema because Trove's route has one, so both pay for the same serialiser.
 */
const user: ProfileUser = {
  id: randomUUID(),
  email: 'bench@example.com',
  name: 'Bench User',
  role: 'user',
  createdAt: new Date().toISOString(),
};

const str = { type: 'string' } as const;
const responseSchema = {
  type: 'object',
  properties: {
    requestId: str,
    timestamp: str,
    duration: { type: 'number' },
    operation: str,
    result: {
      type: 'object',
      properties: { id: str, email: str, name: str, role: str, createdAt: str },
    },
  },
} as const;

const app = Fastify({ logger: false });
app.get('/v1/user/profile', { schema: { response: { 200: responseSchema } } }, async (_request, reply) =>
  readOne('user.readOne', reply.elapsedTime, user),
);

process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
await app.listen({ host: '127.0.0.1', port: portFromEnv() });
