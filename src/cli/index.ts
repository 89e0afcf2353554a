import { main } from './main.js';

const code = await main(process.argv.slice(2));
// `serve` keeps running; other commands end here.
if (code !== 0 || process.argv[2] !== 'serve') process.exitCode = code;
