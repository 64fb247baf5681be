// test_layout_rust's corpus: Rust's own sizes, alignments and field offsets, printed by the
// program, for check.py to hold `qaudit layout` against. Enums of each encoding rustc uses: a
// niche in a variant's field (Msg, Option<String>), a direct tag (Tagged), fieldless variants
// only (Level: a DWARF enumeration, not a layout), and a struct whose fields rustc reorders.
#![allow(dead_code)]
use std::mem::{align_of, size_of};

pub struct Conn {
    fd: i32,
    flag: u8,
    bytes: u64,
    buf: Vec<u8>,
    port: u16,
    name: Option<String>,
}

pub enum Msg {
    Ping,
    Data(Vec<u8>),
    Close { code: u16 },
}

pub enum Tagged {
    Small(u8),
    Wide(u64, u8),
    Empty,
}

pub struct Holder {
    tag: u8,
    msg: Msg,
    tagged: Tagged,
}

fn at<T, F>(base: &T, field: &F) -> usize {
    field as *const F as usize - base as *const T as usize
}

fn size<T>(name: &str) {
    println!("size {} {} {}", name, size_of::<T>(), align_of::<T>());
}

fn main() {
    size::<Conn>("layouts::Conn");
    size::<Msg>("layouts::Msg");
    size::<Tagged>("layouts::Tagged");
    size::<Holder>("layouts::Holder");
    size::<Option<String>>("core::option::Option<alloc::string::String>");
    let c = Conn { fd: 3, flag: 1, bytes: 2, buf: vec![1], port: 80, name: None };
    println!("offset layouts::Conn fd {}", at(&c, &c.fd));
    println!("offset layouts::Conn flag {}", at(&c, &c.flag));
    println!("offset layouts::Conn bytes {}", at(&c, &c.bytes));
    println!("offset layouts::Conn buf {}", at(&c, &c.buf));
    println!("offset layouts::Conn port {}", at(&c, &c.port));
    println!("offset layouts::Conn name {}", at(&c, &c.name));
    let h = Holder { tag: 1, msg: Msg::Close { code: 7 }, tagged: Tagged::Wide(1, 2) };
    println!("offset layouts::Holder tag {}", at(&h, &h.tag));
    println!("offset layouts::Holder msg {}", at(&h, &h.msg));
    println!("offset layouts::Holder tagged {}", at(&h, &h.tagged));
    if let Msg::Close { code } = &h.msg {
        println!("offset layouts::Msg Close.code {}", at(&h.msg, code));
    }
    let data = Msg::Data(vec![1]);
    if let Msg::Data(v) = &data {
        println!("offset layouts::Msg Data.__0 {}", at(&data, v));
    }
    if let Tagged::Wide(a, b) = &h.tagged {
        println!("offset layouts::Tagged Wide.__0 {}", at(&h.tagged, a));
        println!("offset layouts::Tagged Wide.__1 {}", at(&h.tagged, b));
    }
    let small = Tagged::Small(9);
    if let Tagged::Small(a) = &small {
        println!("offset layouts::Tagged Small.__0 {}", at(&small, a));
    }
    // std's unsized types (Path, OsStr, their Slice { inner: [u8] }) come into the DWARF too.
    let path = std::path::Path::new("/tmp/x");
    println!("unsized {}", path.as_os_str().len());
    let name = Some(String::from("x"));
    if let Some(s) = &name {
        println!("offset core::option::Option<alloc::string::String> Some.__0 {}", at(&name, s));
    }
}
