import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Two cores: run files in parallel, but no more than the machine has.
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 30_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      { extends: true, test: { name: 'api', include: ['test/api/**/*.test.ts'] } },
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'] } },
      {
        extends: true,
        test: {
          // The API suite again, on PostgreSQL + Redis (test/helpers/backends.ts), plus what only matters there.
          // startup-and-shutdown is about the embedded data directory's files and stays in the api project.
          name: 'services',
          include: ['test/api/**/*.test.ts', 'test/services/**/*.test.ts'],
          exclude: ['test/api/startup-and-shutdown.test.ts'],
          env: { TROVE_TEST_BACKEND: 'services' },
        },
      },
    ],
  },
});
