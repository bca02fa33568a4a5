# lit configuration of the pshard compiler tests (tests/compiler/*.mlir).
#
# Tests run `pshard-opt ... | FileCheck %s` (and pshard-compile, pshard-mkmodel); all are
# found through PATH, set here to this build's tools and LLVM 16's FileCheck. `%profiles` is the folder of the
# shipped reference profiles built as *.pshprof (profiles/CMakeLists.txt).
import os

import lit.formats

config.name = "pshard-compiler"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = config.pshard_obj_root
# planner/ holds GoogleTest sources of the planner core, not lit tests.
config.excludes = ["planner", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in"]

config.environment["PATH"] = os.pathsep.join(
    config.pshard_tools_dirs + [config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%profiles", config.pshard_profiles_dir))
