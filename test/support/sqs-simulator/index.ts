/** The SQS simulator the AWS tests run against (see ./simulator.ts for what it is and is not). */
export { manualClock, realClock, type Clock } from './clock.js';
export { deliver, lambdaEvent, receiveEvent, type Consumer } from './event-source.js';
export { DEFAULT_MAXIMUM_MESSAGE_SIZE, SimulatedQueue, type Message, type QueueOptions, type SentEntry } from './queue.js';
export { SqsSimulator, sqsSimulatorPerSuite, type Behaviour } from './simulator.js';
export { attributesMd5, messageBytes, SqsFault, type Attribute } from './wire.js';
