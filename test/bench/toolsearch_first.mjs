// The first tool search after start (issue 34 item 10): one server of N
// tools, each described by 50 random nine-letter words; the query is a word
// of the last tool. Prints whether the first answer found it, its
// `indexing`, its wall-clock time, and how many more searches it took.
//   MCPGW_BIN=build/mcpgw node test/bench/toolsearch_first.mjs N [budget_us]
// budget_us sets MCPGW_TOOLSEARCH_QUERY_US (10000 steps the way the code
// before did: one 10 ms step); without it, the default.
import fs from 'node:fs';
import path from 'node:path';
import { start, fixtures, tmpdir } from '../integration/lib/harness.mjs';

const N = Number(process.argv[2] || 2000);
const budget = process.argv[3];
const word = () => Array.from({ length: 9 }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('');
const file = path.join(tmpdir(), 'tools.json');
const tools = Array.from({ length: N }, (_, i) => ({ name: `tool_${i}`, description: Array.from({ length: 50 }, word).join(' '), inputSchema: { type: 'object' } }));
fs.writeFileSync(file, JSON.stringify(tools));
const probe = tools[N - 1].description.split(' ')[7];
const url = `/v1/tools?q=${probe}&limit=1`;
const found = (r) => r.json.tools[0]?.name === `tool_${N - 1}`;

const d = await start(`version: 1\nservers:\n  big:\n    command: ${path.join(fixtures, 'mcp_fixture')}\n    args: ['--tools-file', '${file}']\n`,
  { waitReady: true, env: budget === undefined ? {} : { MCPGW_TOOLSEARCH_QUERY_US: budget } });
try {
  const t0 = performance.now();
  const first = await d.get(url);
  const ms = performance.now() - t0;
  let more = 0;
  for (let r = first; !found(r) && more < 1000; more++) r = await d.get(url);
  console.log(JSON.stringify({ tools: N, budget_us: budget ?? 'default', firstFound: found(first), indexing: first.json.indexing ?? null, firstMs: Math.round(ms), moreSearches: more }));
} finally {
  await d.stop();
}
