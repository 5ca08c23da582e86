import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Test } from '@nestjs/testing';
import { LeaderElectionService } from 'nest-leader';

const variables = ['LEASE_NAME', 'LEADER_LOCK', 'LEASE_DURATION_SECONDS'] as const;
const saved = Object.fromEntries(variables.map((name) => [name, process.env[name]]));
after(() => {
  for (const name of variables) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

test("the README's forRootAsync example works with LEASE_DURATION_SECONDS set (a string)", async () => {
  Object.assign(process.env, {
    LEASE_NAME: 'billing-worker',
    LEADER_LOCK: 'memory',
    LEASE_DURATION_SECONDS: '20',
  });
  const { AppModule } = await import('../../../build/examples/async-options.js');

  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = await moduleRef.createNestApplication().init();
  try {
    assert.equal(app.get(LeaderElectionService).timings.leaseDurationSeconds, 20);
  } finally {
    await app.close();
  }
});
