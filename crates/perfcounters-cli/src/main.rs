//! The `perfcounters` command.

fn main() {
    println!("perfcounters");
}
