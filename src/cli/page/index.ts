/**
 * The live page of `chat-webhooks listen`: routes.ts answers `/`, `/events` and resend; html.ts renders the
 * page (its script in client*.ts, sent as text and run in the browser); live-feed.ts keeps the newest
 * deliveries, bounded, for the page's feed; guard.ts says which hosts and origins may ask.
 */
export { allowedHosts } from './guard.js';
export { FEED_LIMITS, LiveFeed, type FeedLimits } from './live-feed.js';
export { isPageRequest, servePage, type PageRoutes } from './routes.js';
