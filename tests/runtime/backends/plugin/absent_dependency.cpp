// A library the FAKE_NEEDS_ABSENT plugin links but cannot find at run time (it is built
// into a folder outside that plugin's search path).
__attribute__((visibility("default"))) int pshard_test_absent_dependency() { return 1; }
