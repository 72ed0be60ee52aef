// Your handlers, registered once and shared by the consumer (and by any other place that runs them: tests,
// a replay script). They run in the consumer function, once per event, with { key, attempt, receivedAt }.
export function registerHandlers(webhooks) {
  return webhooks
    .on('message_sent', async (event, { key, attempt }) => {
      const { message } = event.data;
      console.log(JSON.stringify({ handled: 'message_sent', key, attempt, from: message.sender, text: message.data?.text }));
    })
    .onAny((event, { key }) => console.log(JSON.stringify({ event: event.trigger, key })))
    // Failed handlers (the record goes back to SQS), records that are no webhook (dead-lettered after
    // maxReceiveCount receives), and an idempotency table that cannot be reached.
    .onError((error) => console.error(JSON.stringify({ error: error.code, message: error.message, key: error.key, attempt: error.attempt })))
    .onDuplicate((event, { key }) => console.log(JSON.stringify({ duplicate: event.trigger, key })));
}
