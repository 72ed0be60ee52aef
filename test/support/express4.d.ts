// express4 is the npm alias of express@4 (dev dependency): its API, as far as the tests use it, is Express 5's.
declare module 'express4' {
  import express from 'express';
  export default express;
}
