// The Testing page: the instruments a test suite uses on this platform, one section each (the
// fault rules now; other sections, such as snapshots, sit beside them).

import { PageTitle } from '../ui.js';
import { FaultsSection } from './faults.js';

export function TestingPage() {
  return (
    <section>
      <PageTitle note="What a test suite sets on this platform to see how an integration copes when things go wrong.">
        Testing
      </PageTitle>
      <FaultsSection />
    </section>
  );
}
