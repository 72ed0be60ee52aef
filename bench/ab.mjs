// A quick side-by-side of a few servers of servers.mjs while working on the receive path, in interleaved
// rounds (medians; the first server is the base of the ratios). Not a replacement for `npm run bench`.
//   npm run build && node bench/ab.mjs bare-node ours-node [seconds per round] [rounds]
// Besides req/s it prints the server's CPU time per request (user + system, and user alone): less sensitive
// to how busy the load generator was, and the minimum over rounds is the least disturbed figure on a shared
// machine. AB_SCRIPT=<file in bench/> runs servers from another script speaking the same IPC protocol
// (throwaway variants while bisecting a cost).
import { startChild } from './lib/procs.mjs';
const names = process.argv.slice(2).filter((a) => !/^\d+$/.test(a));
const [seconds = 4, rounds = 3] = process.argv.slice(2).filter((a) => /^\d+$/.test(a)).map(Number);
const loadgen = startChild('loadgen.mjs', [], { core: 1 });
await loadgen.ready;
const servers = {};
for (const name of names) {
  const s = startChild(process.env.AB_SCRIPT ?? 'servers.mjs', [name, '0'], { core: 0 });
  s.port = (await s.ready).port;
  s.kind = name === 'octokit' ? 'octokit' : 'chat';
  servers[name] = s;
  await loadgen.call({ type: 'run', port: s.port, kind: s.kind, connections: 50, duration: 1 });
}
const results = Object.fromEntries(names.map((n) => [n, []]));
const cpu = Object.fromEntries(names.map((n) => [n, []]));
const user = Object.fromEntries(names.map((n) => [n, []]));
const cpuTime = async (server) => (await server.call({ type: 'stats' })).stats.cpu;
for (let r = 0; r < rounds; r++) {
  for (const name of names) {
    const before = await cpuTime(servers[name]);
    const reply = await loadgen.call({ type: 'run', port: servers[name].port, kind: servers[name].kind, connections: 50, duration: seconds });
    const after = await cpuTime(servers[name]);
    const ok = Math.max(1, reply.result.ok);
    cpu[name].push((after.user + after.system - before.user - before.system) / ok);
    user[name].push((after.user - before.user) / ok);
    results[name].push(Math.round(reply.result.rps));
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(results[names[0]]);
const baseCpu = median(cpu[names[0]]);
for (const name of names) {
  const us = median(cpu[name]);
  console.log(
    name.padEnd(14),
    String(median(results[name])).padStart(7), 'req/s', (median(results[name]) / base).toFixed(2) + 'x', results[name].join(' ').padEnd(20),
    '| server CPU', us.toFixed(1), 'µs/req', (baseCpu / us).toFixed(2) + 'x', '| user', median(user[name]).toFixed(1), 'µs/req, min', Math.min(...user[name]).toFixed(1), '| CPU min', Math.min(...cpu[name]).toFixed(1),
  );
}
for (const server of Object.values(servers)) server.child.kill();
loadgen.child.kill();
process.exit(0);
