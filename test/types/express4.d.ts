// Express 4 is installed under the alias "express4" so both majors are tested side by side; its API
// surface used in tests matches Express 5's types.
declare module "express4" {
  import express from "express";
  export default express;
}
