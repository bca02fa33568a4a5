// A Device that forwards every call to an emulated GPU, for tests that watch what the
// executor hands a device (device_handoff_test, pass_graph_test): override the calls to
// check, call ForwardingDevice's to run them.
#pragma once

#include "runtime/backends/emu/emu_device.h"

#include <memory>

namespace pshard::testing {

class ForwardingDevice : public Device {
public:
  explicit ForwardingDevice(std::unique_ptr<EmuDevice> emu) : emu_(std::move(emu)) {}

  DeviceInfo info() const override { return emu_->info(); }
  Result<uint8_t*> allocate_arena(uint64_t b) override { return emu_->allocate_arena(b); }
  Status resize_arena(uint64_t b) override { return emu_->resize_arena(b); }
  void free_arena() override { emu_->free_arena(); }
  uint8_t* arena() const override { return emu_->arena(); }
  uint64_t arena_bytes() const override { return emu_->arena_bytes(); }
  Status register_host_memory(const void* h, uint64_t b) override {
    return emu_->register_host_memory(h, b);
  }
  void unregister_host_memory(const void* h) override { emu_->unregister_host_memory(h); }
  Result<uint8_t*> map_host_memory(void* h, uint64_t b) override {
    return emu_->map_host_memory(h, b);
  }
  void copy_to_device(Queue q, void* d, const void* h, uint64_t b) override {
    emu_->copy_to_device(q, d, h, b);
  }
  void copy_to_host(Queue q, void* h, const void* d, uint64_t b) override {
    emu_->copy_to_host(q, h, d, b);
  }
  Result<std::unique_ptr<DeviceEvent>> create_event() override { return emu_->create_event(); }
  void record(DeviceEvent& e, Queue q) override { emu_->record(e, q); }
  void wait(Queue q, const DeviceEvent& e) override { emu_->wait(q, e); }
  Status synchronize(const DeviceEvent& e) override { return emu_->synchronize(e); }
  Status synchronize() override { return emu_->synchronize(); }
  Result<int64_t> completion_time_ns(const DeviceEvent& e) override {
    return emu_->completion_time_ns(e);
  }
  Ops& compute() override { return emu_->compute(); }
  void set_workspace(uint8_t* p, uint64_t bytes) override { emu_->set_workspace(p, bytes); }
  uint64_t kernel_workspace_bytes() const override { return emu_->kernel_workspace_bytes(); }
  // Through this device's own compute() and copies (Device's default), so that a test
  // overriding compute() sees the experts' ops too.
  void run_expert_groups(const MoeDispatch& moe, std::span<const ExpertRowGroup> groups,
                         const float* in, float* out) override {
    Device::run_expert_groups(moe, groups, in, out);
  }

protected:
  EmuDevice& emu() { return *emu_; }

private:
  std::unique_ptr<EmuDevice> emu_;
};

} // namespace pshard::testing
