// The Testing page: the instruments a test suite uses on this platform, one section each. A
// section is a component of its own page file (the fault rules: faults.tsx), listed below.

import { PageTitle } from '../ui.js';
import { FaultsSection } from './faults.js';

export function TestingPage() {
  return (
    <section>
      <PageTitle note="What a test suite sets on this platform, a section each: fault rules to see how an integration copes when things go wrong.">
        Testing
      </PageTitle>
      <FaultsSection />
    </section>
  );
}
