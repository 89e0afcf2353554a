import { sqliteTwoConnectionsHarness } from './metadata-store-harnesses.js';
import { signInChallengesContract } from './sign-in-challenges.contract.js';

signInChallengesContract('SQLite', sqliteTwoConnectionsHarness);
