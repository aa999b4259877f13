// The Testing page: the instruments a test suite uses on this platform, one section each. A
// section is a component of its own page file (the fault rules: faults.tsx; the snapshots:
// snapshots.tsx), listed below.

import { PageTitle } from '../ui.js';
import { FaultsSection } from './faults.js';
import { SnapshotsPanel } from './snapshots.js';

/** `onRestored`: called after a snapshot's restore (the sandbox clock moved). */
export function TestingPage({ onRestored }: { onRestored: () => void }) {
  return (
    <section>
      <PageTitle note="What a test suite sets on this platform, a section each: fault rules to see how an integration copes when things go wrong, snapshots to start each test from a known state.">
        Testing
      </PageTitle>
      <FaultsSection />
      <SnapshotsPanel onRestored={onRestored} />
    </section>
  );
}
