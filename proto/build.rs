//! Compiles the contract's schema, `schema/baton/v1/*.proto`, without protoc: protox parses it
//! into a descriptor set, which is kept in OUT_DIR for `FILE_DESCRIPTOR_SET`, and prost-build
//! generates the Rust types of `baton_proto::schema` from it.

use std::path::PathBuf;

const SCHEMA: &str = "schema";
const PACKAGE_DIR: &str = "schema/baton/v1";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed={SCHEMA}");
    let mut files: Vec<PathBuf> = std::fs::read_dir(PACKAGE_DIR)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    files.retain(|path| path.extension().is_some_and(|ext| ext == "proto"));
    files.sort();

    let mut compiler = protox::Compiler::new([SCHEMA])?;
    compiler
        .include_source_info(true)
        .include_imports(true)
        .open_files(&files)?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(
        out_dir.join("baton_v1.bin"),
        compiler.encode_file_descriptor_set(),
    )?;

    // The well-known types it imports map to prost-types.
    prost_build::Config::new().compile_fds(compiler.file_descriptor_set())?;
    Ok(())
}
