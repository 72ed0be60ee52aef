// Preloaded (`node --import`) into the shutdown tests' children: once the event loop has nothing left to do,
// prints what is still open. A process that exits by itself gets here; one held open by a socket or a timer
// never does (and the test sees it still running).
process.on('beforeExit', () => {
  process.stderr.write(`active resources at exit: ${JSON.stringify(process.getActiveResourcesInfo())}\n`);
});
