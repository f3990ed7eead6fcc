// vitest's sequencer for the two groups of tools/test-groups.ts.
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { interleave } from './test-groups.js';

export default class TestOrder extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const serial = sorted.filter((f) => f.project.name === 'serial');
    return interleave(serial, sorted.filter((f) => f.project.name !== 'serial'));
  }
}
