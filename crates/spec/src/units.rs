//! TODO(helper): see brief
