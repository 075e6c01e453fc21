import { runServiceProcess } from "@avatar/runtime";
import { pipelineModule } from "./index.js";

await runServiceProcess(pipelineModule);
