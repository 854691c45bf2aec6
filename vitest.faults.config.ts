import { defineConfig } from 'vitest/config';

/**
 * `npm run test:faults`: the service as real child processes, killed, starved
 * and fed garbage. Slow by nature (a two-minute receiver outage), so kept out
 * of `npm test`. Two files at a time: most of each is waiting, and the machine
 * is shared.
 */
export default defineConfig({
  test: {
    globalSetup: ['./test/helpers/global-setup.ts'],
    // The worker-crash test of the normal suite is a fault too: a SIGKILLed `npm run worker`.
    include: ['test/faults/**/*.test.ts', 'test/delivery-crash.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 240_000,
    hookTimeout: 180_000,
    reporters: ['default'],
    // In CI a failed fault test is tried once more (vitest reports it as flaky, and the report shows the first failure).
    retry: process.env.CI ? 1 : 0,
  },
});
