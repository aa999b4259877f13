// Runs before each test file (vitest setupFiles): the cleanup every file needs.
import { afterAll } from 'vitest';
import { closeOpenApps } from './helper.js';

afterAll(closeOpenApps);
