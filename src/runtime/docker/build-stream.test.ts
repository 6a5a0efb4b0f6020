import { describe, expect, it } from 'vitest';
import type { BuildProgress } from '../types.js';
import { BuildStreamReader } from './build-stream.js';

const line = (event: object): string => `${JSON.stringify(event)}\n`;

describe('BuildStreamReader', () => {
  it('reports steps (Podman and Docker spelling) and output, and names the failing step with its last lines', () => {
    const events: BuildProgress[] = [];
    const reader = new BuildStreamReader('img:1', (p) => events.push(p));
    const answer =
      line({ stream: '[1/2] STEP 1/4: FROM base AS builder\n' }) +
      line({ stream: 'STEP 2/4: RUN npm install nope\n' }) +
      line({ stream: 'npm error 404 Not Found - GET https://registry' }) + // a line split over two events
      line({ stream: '.npmjs.org/nope\nnpm error 404\n' }) +
      line({ error: 'building at STEP "RUN npm install nope": exit status 1', errorDetail: {} });
    // Chunks cut anywhere, as HTTP delivers them.
    for (let i = 0; i < answer.length; i += 7) reader.push(answer.slice(i, i + 7));
    reader.end();
    expect(events.filter((e) => e.phase === 'step').map((e) => e.message)).toEqual([
      '[1/2] STEP 1/4: FROM base AS builder',
      'STEP 2/4: RUN npm install nope',
    ]);
    expect(reader.failureMessage()).toBe(
      'building img:1 failed at STEP 2/4: RUN npm install nope: exit status 1\n' +
        'Last lines of the step:\n' +
        '  npm error 404 Not Found - GET https://registry.npmjs.org/nope\n' +
        '  npm error 404',
    );
  });

  it('reads Docker\'s "Step n/m :" lines and leaves out its bookkeeping lines', () => {
    const events: BuildProgress[] = [];
    const reader = new BuildStreamReader('img', (p) => events.push(p));
    reader.push(
      line({ stream: 'Step 1/2 : FROM x\n ---> 1234\n' }) + line({ stream: 'Successfully built 1234\n' }),
    );
    reader.end();
    expect(events.map((e) => `${e.phase} ${e.message}`)).toEqual(['step Step 1/2 : FROM x']);
    expect(reader.failure).toBeUndefined();
  });
});
