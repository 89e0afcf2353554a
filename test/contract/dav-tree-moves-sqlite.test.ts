import { davTreeMovesContract } from './dav-tree-moves.contract.js';
import { sqliteTwoConnectionsHarness } from './metadata-store-harnesses.js';

davTreeMovesContract('SQLite', sqliteTwoConnectionsHarness, { samePeer: true });
