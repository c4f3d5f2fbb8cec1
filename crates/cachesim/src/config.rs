//! Cache geometry and behaviour: [`CacheConfig`], the three QSAN presets and validation.
//!
//! The QSAN SSD cache divides its space into *cache blocks*, each divided into *sub-blocks*
//! (the unit actually filled and tracked valid/dirty). Every block of the backing store has a
//! read counter and a write counter; a block is populated once its counter reaches the
//! populate-on-read (PoR) / populate-on-write (PoW) threshold, 0 disabling that kind of fill.
//! The presets pick block size, sub-block size and thresholds by I/O type.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// 1 KiB.
pub const KIB: u64 = 1024;
/// 1 MiB.
pub const MIB: u64 = 1024 * KIB;
/// 1 GiB.
pub const GIB: u64 = 1024 * MIB;

/// Largest number of cache blocks (slab indices are `u32`, `u32::MAX` is the list sentinel).
pub const MAX_BLOCKS: u64 = u32::MAX as u64 - 1;
/// Largest number of sub-blocks per cache block (the valid and dirty bitmaps of one block
/// are at most 64 words of 64 bits each).
pub const MAX_SUB_BLOCKS: u64 = 4096;

/// What happens to host writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// Every write goes to the HDDs; cached blocks are updated on the SSD, uncached ones are
    /// populated once their write counter reaches PoW. Only reads are accelerated; an SSD
    /// failure loses nothing.
    #[default]
    WriteThrough,
    /// Writes to cached blocks (or blocks whose write counter reached PoW) go to the SSD only
    /// and leave the sub-blocks dirty; dirty data reaches the HDDs when its block is evicted.
    WriteBack,
    /// Writes go to the HDDs and invalidate the cached sub-blocks they touch (bcache
    /// `writearound`); caches are populated by reads only. PoW is not used.
    WriteAround,
    /// A read cache: writes go to the HDDs and invalidate the cached copies they touch;
    /// caches are populated by reads only. PoW is not used. In this model it behaves exactly
    /// like [`Mode::WriteAround`]; it is a separate mode so reports carry the configured name.
    ReadOnly,
}

impl Mode {
    /// Short name: `wt`, `wb`, `wa`, `ro`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::WriteThrough => "wt",
            Mode::WriteBack => "wb",
            Mode::WriteAround => "wa",
            Mode::ReadOnly => "ro",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mode {
    type Err = ConfigError;
    /// Accepts `wt`/`write-through`, `wb`/`write-back`, `wa`/`write-around`,
    /// `ro`/`read-only` (case-insensitive, `_` or `-`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().replace('_', "-").as_str() {
            "wt" | "write-through" | "writethrough" => Ok(Mode::WriteThrough),
            "wb" | "write-back" | "writeback" => Ok(Mode::WriteBack),
            "wa" | "write-around" | "writearound" => Ok(Mode::WriteAround),
            "ro" | "read-only" | "readonly" => Ok(Mode::ReadOnly),
            _ => Err(ConfigError::UnknownName { what: "mode", name: s.to_string() }),
        }
    }
}

/// The QSAN I/O-type presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Preset {
    /// Database service (8 KiB I/O): 1 MiB blocks, 8 KiB sub-blocks, PoR 2, PoW 0 (written
    /// data is rarely read back soon, so populate-on-write is off).
    Database,
    /// File system: 2 MiB blocks, 16 KiB sub-blocks, PoR 2, PoW 2 (written data is often
    /// read back soon).
    FileSystem,
    /// Web service (64 KiB I/O): 4 MiB blocks, 64 KiB sub-blocks, PoR 2, PoW 0.
    Web,
}

impl Preset {
    /// All presets, in declaration order.
    pub const ALL: [Preset; 3] = [Preset::Database, Preset::FileSystem, Preset::Web];

    /// `database`, `filesystem`, `web`.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Database => "database",
            Preset::FileSystem => "filesystem",
            Preset::Web => "web",
        }
    }

    /// The configuration of this preset for a cache of `capacity_bytes` (write-through, no
    /// sequential cut-off).
    pub fn config(self, capacity_bytes: u64) -> CacheConfig {
        let (block_bytes, sub_block_bytes, por, pow) = match self {
            Preset::Database => (MIB, 8 * KIB, 2, 0),
            Preset::FileSystem => (2 * MIB, 16 * KIB, 2, 2),
            Preset::Web => (4 * MIB, 64 * KIB, 2, 0),
        };
        CacheConfig {
            capacity_bytes,
            block_bytes,
            sub_block_bytes,
            por,
            pow,
            mode: Mode::WriteThrough,
            seq_cutoff: None,
        }
    }
}

impl FromStr for Preset {
    type Err = ConfigError;
    /// `database`/`db`, `filesystem`/`fs`/`file-system`, `web` (case-insensitive).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().replace('_', "-").as_str() {
            "database" | "db" => Ok(Preset::Database),
            "filesystem" | "file-system" | "fs" => Ok(Preset::FileSystem),
            "web" | "web-service" => Ok(Preset::Web),
            _ => Err(ConfigError::UnknownName { what: "preset", name: s.to_string() }),
        }
    }
}

/// A configuration error; every message is one line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    /// A size that must be positive is 0.
    #[error("{what} must be > 0")]
    Zero {
        /// Which parameter.
        what: &'static str,
    },
    /// A size that is neither a power of two nor a multiple of 512 bytes.
    #[error("{what} = {value} bytes must be a power of two or a multiple of 512 bytes")]
    BadSize {
        /// Which parameter.
        what: &'static str,
        /// Its value.
        value: u64,
    },
    /// The sub-block size does not divide the block size.
    #[error("sub_block_bytes = {sub} does not divide block_bytes = {block}")]
    SubBlockNotDivisor {
        /// Sub-block size.
        sub: u64,
        /// Block size.
        block: u64,
    },
    /// Too many sub-blocks per block for the bitmaps.
    #[error("{n} sub-blocks per block (block_bytes / sub_block_bytes); at most {MAX_SUB_BLOCKS} supported")]
    TooManySubBlocks {
        /// Sub-blocks per block.
        n: u64,
    },
    /// The capacity does not hold one block.
    #[error("capacity {capacity} bytes is smaller than one cache block ({block} bytes)")]
    CapacityTooSmall {
        /// Capacity.
        capacity: u64,
        /// Block (or unit) size.
        block: u64,
    },
    /// The capacity holds more blocks than the slab indexes.
    #[error("capacity holds {blocks} cache blocks; at most {MAX_BLOCKS} supported (use larger blocks)")]
    TooManyBlocks {
        /// Blocks.
        blocks: u64,
    },
    /// A policy parameter out of range.
    #[error("{what} = {value} is out of range ({range})")]
    OutOfRange {
        /// Which parameter.
        what: &'static str,
        /// Its value.
        value: u64,
        /// The accepted range, in words.
        range: &'static str,
    },
    /// An unknown preset or mode name.
    #[error("unknown {what} '{name}'")]
    UnknownName {
        /// `preset` or `mode`.
        what: &'static str,
        /// The name given.
        name: String,
    },
}

/// Checks that `value` is positive and a power of two or a multiple of 512.
pub(crate) fn check_size(what: &'static str, value: u64) -> Result<(), ConfigError> {
    if value == 0 {
        return Err(ConfigError::Zero { what });
    }
    if !value.is_power_of_two() && !value.is_multiple_of(512) {
        return Err(ConfigError::BadSize { what, value });
    }
    Ok(())
}

/// Checks a capacity against a block / unit size and returns the number of blocks.
pub(crate) fn check_capacity(capacity: u64, block: u64) -> Result<u64, ConfigError> {
    if capacity < block {
        return Err(ConfigError::CapacityTooSmall { capacity, block });
    }
    let blocks = capacity / block;
    if blocks > MAX_BLOCKS {
        return Err(ConfigError::TooManyBlocks { blocks });
    }
    Ok(blocks)
}

/// Configuration of the QSAN-style cache model ([`crate::qsan::QsanCache`]).
///
/// Sizes are bytes. A capacity that is not a multiple of the block size is rounded down to
/// whole blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheConfig {
    /// Total SSD cache capacity.
    pub capacity_bytes: u64,
    /// Cache block size (the unit of allocation, LRU replacement and counters).
    pub block_bytes: u64,
    /// Sub-block size (the unit filled and tracked valid / dirty); divides `block_bytes`.
    pub sub_block_bytes: u64,
    /// Populate-on-read threshold; 0 disables read fills.
    pub por: u32,
    /// Populate-on-write threshold; 0 disables write fills (write-through / write-back only).
    pub pow: u32,
    /// Write policy.
    pub mode: Mode,
    /// Sequential cut-off: a per-device sequential stream longer than this many bytes bypasses
    /// the cache. `None` disables it (the QSAN default).
    pub seq_cutoff: Option<u64>,
}

impl CacheConfig {
    /// The QSAN "Database service" preset: 1 MiB / 8 KiB / PoR 2 / PoW 0, write-through.
    pub fn database(capacity_bytes: u64) -> Self {
        Preset::Database.config(capacity_bytes)
    }

    /// The QSAN "File system" preset: 2 MiB / 16 KiB / PoR 2 / PoW 2, write-through.
    pub fn filesystem(capacity_bytes: u64) -> Self {
        Preset::FileSystem.config(capacity_bytes)
    }

    /// The QSAN "Web service" preset: 4 MiB / 64 KiB / PoR 2 / PoW 0, write-through.
    pub fn web(capacity_bytes: u64) -> Self {
        Preset::Web.config(capacity_bytes)
    }

    /// This configuration with another write mode.
    pub fn with_mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// This configuration with other populate thresholds.
    pub fn with_thresholds(mut self, por: u32, pow: u32) -> Self {
        self.por = por;
        self.pow = pow;
        self
    }

    /// This configuration with a sequential cut-off (`None`: off).
    pub fn with_seq_cutoff(mut self, seq_cutoff: Option<u64>) -> Self {
        self.seq_cutoff = seq_cutoff;
        self
    }

    /// Checks the geometry: sizes positive and powers of two or multiples of 512 bytes, the
    /// sub-block divides the block, at most [`MAX_SUB_BLOCKS`] sub-blocks per block, the
    /// capacity holds at least one and at most [`MAX_BLOCKS`] blocks, a cut-off is > 0.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_size("block_bytes", self.block_bytes)?;
        check_size("sub_block_bytes", self.sub_block_bytes)?;
        if self.sub_block_bytes > self.block_bytes || !self.block_bytes.is_multiple_of(self.sub_block_bytes) {
            return Err(ConfigError::SubBlockNotDivisor { sub: self.sub_block_bytes, block: self.block_bytes });
        }
        let n = self.block_bytes / self.sub_block_bytes;
        if n > MAX_SUB_BLOCKS {
            return Err(ConfigError::TooManySubBlocks { n });
        }
        check_capacity(self.capacity_bytes, self.block_bytes)?;
        if self.seq_cutoff == Some(0) {
            return Err(ConfigError::Zero { what: "seq_cutoff" });
        }
        Ok(())
    }

    /// Number of whole cache blocks in the capacity.
    pub fn blocks(&self) -> u64 {
        self.capacity_bytes / self.block_bytes.max(1)
    }

    /// Sub-blocks per cache block.
    pub fn sub_blocks_per_block(&self) -> u64 {
        self.block_bytes / self.sub_block_bytes.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_match_the_source() {
        let d = CacheConfig::database(GIB);
        assert_eq!((d.block_bytes, d.sub_block_bytes, d.por, d.pow), (MIB, 8 * KIB, 2, 0));
        let f = CacheConfig::filesystem(GIB);
        assert_eq!((f.block_bytes, f.sub_block_bytes, f.por, f.pow), (2 * MIB, 16 * KIB, 2, 2));
        let w = CacheConfig::web(GIB);
        assert_eq!((w.block_bytes, w.sub_block_bytes, w.por, w.pow), (4 * MIB, 64 * KIB, 2, 0));
        for p in Preset::ALL {
            assert!(p.config(GIB).validate().is_ok());
            assert_eq!(p.name().parse::<Preset>(), Ok(p));
        }
        assert_eq!(d.blocks(), 1024);
        assert_eq!(d.sub_blocks_per_block(), 128);
    }

    #[test]
    fn validation_errors_are_one_line() {
        let base = CacheConfig::database(GIB);
        let cases = [
            CacheConfig { block_bytes: 0, ..base },
            CacheConfig { block_bytes: 1000, ..base },
            CacheConfig { sub_block_bytes: 3 * 512, ..base },
            CacheConfig { sub_block_bytes: 2 * MIB, ..base },
            CacheConfig { sub_block_bytes: 1, ..base },
            CacheConfig { capacity_bytes: MIB - 1, ..base },
            CacheConfig { capacity_bytes: u64::MAX, block_bytes: 512, sub_block_bytes: 512, ..base },
            CacheConfig { seq_cutoff: Some(0), ..base },
        ];
        for c in cases {
            let e = c.validate().expect_err("invalid config accepted");
            let msg = e.to_string();
            assert!(!msg.contains('\n') && !msg.is_empty(), "{msg}");
        }
        // A non-power-of-two multiple of 512 is fine.
        assert!(CacheConfig { block_bytes: 3 * 512, sub_block_bytes: 512, ..base }.validate().is_ok());
        assert_eq!("WB".parse::<Mode>(), Ok(Mode::WriteBack));
        assert!("nope".parse::<Mode>().is_err());
    }
}
