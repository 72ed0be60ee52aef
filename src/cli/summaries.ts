/**
 * What `chat-webhooks --help` lists of each command, without loading it: the command's own file takes its
 * description from here too, so the two never differ. A new command is one entry here and one in commands.ts.
 */
export const summaries = {
  send: { term: 'send [options] [trigger]', description: 'Post realistic events to a webhook receiver, exactly as the platform does.' },
  listen: {
    term: 'listen [options]',
    description: 'Receive webhooks locally: print each delivery, its validation and idempotency key, and show them live at /.',
  },
  validate: {
    term: 'validate [options] <file|->',
    description: 'Validate one event, or an NDJSON stream of them, as the receiver would; exit 1 when any is invalid.',
  },
  triggers: { term: 'triggers [options]', description: 'List the known triggers, when each fires, and what its idempotency key is made of.' },
  replay: { term: 'replay [options] <file.ndjson>', description: 'Re-send, in order, the deliveries `listen --json` captured.' },
  inbox: {
    term: 'inbox',
    description:
      'Look into a durable inbox (SQLite, Redis or PostgreSQL): stats, list, show one entry, retry dead entries, purge; migrate PostgreSQL.',
  },
  reconcile: {
    term: 'reconcile [options]',
    description: "Recover the events an outage lost from the platform's list of messages, into the app's inbox (key from CHAT_API_KEY).",
  },
  serve: {
    term: 'serve [options] <module>',
    description: 'Serve a Lambda handler module over local HTTP: each request becomes an API Gateway HTTP API (payload 2.0) event.',
  },
} as const satisfies Record<string, { term: string; description: string }>;
