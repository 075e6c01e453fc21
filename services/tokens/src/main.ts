import { runServiceProcess } from "@avatar/runtime";
import { tokensModule } from "./index.js";

await runServiceProcess(tokensModule);
