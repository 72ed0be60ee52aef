/** Text: wording the receiver and the command line share ("did you mean", by edit distance). A leaf. */
export { closest, didYouMean, distance } from './suggest.js';
