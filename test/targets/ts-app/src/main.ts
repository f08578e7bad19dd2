// A TypeScript service's hot path, compiled by tsc with source maps
// (test/source-maps.test.js): each turn parses order lines and scores
// them, scoreOrder taking most of the time, parseOrder some. Prints
// "ready PID"; with SECONDS=N exits after N s. With WHERE=1 (run with
// --enable-source-maps) it prints instead where Node's own stack traces put
// each hot function: "where NAME FILE:LINE:COLUMN" (each throws on its own
// first line when asked to), and exits.
import { parseOrder } from './orders/parse';
import { scoreOrder } from './orders/score';

// Order lines with a long tail of fields, so that parsing takes its share.
const TAIL = ',1234567'.repeat(40);
const LINES = ['1017,3,250', '2042,12,99', '3001,1,12000', '4420,7,1350'].map((l) => l + TAIL);

function where(name: string, probe: () => void): void {
  try {
    probe();
  } catch (err) {
    const top = String((err as Error).stack).split('\n')[1] || '';
    const m = /\((.*):(\d+):(\d+)\)$/.exec(top) || /at (.*):(\d+):(\d+)$/.exec(top);
    console.log(`where ${name} ${m ? `${m[1]}:${m[2]}:${m[3]}` : top.trim()}`);
  }
}

function turn(): void {
  const end = Date.now() + 20;
  let total = 0;
  while (Date.now() < end) {
    for (const line of LINES) total += scoreOrder(parseOrder(line));
  }
  (globalThis as { sink?: number }).sink = total;
  setImmediate(turn);
}

if (process.env.WHERE) {
  where('parseOrder', () => parseOrder('1,2,3', true));
  where('scoreOrder', () => scoreOrder({ id: 1, quantity: 2, price: 3 }, true));
} else {
  setImmediate(turn);
  if (process.env.SECONDS) setTimeout(() => process.exit(0), Number(process.env.SECONDS) * 1000);
  console.log(`ready ${process.pid}`);
}
