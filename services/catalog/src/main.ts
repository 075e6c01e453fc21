import { runServiceProcess } from "@avatar/runtime";
import { catalogModule } from "./index.js";

await runServiceProcess(catalogModule);
