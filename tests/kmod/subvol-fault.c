// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection for dm-subvol's tests: turns the results of the
 * target's host reads and writes into an error, for as many of them as
 * the test asks.  The Debian kernel has no fault injection framework, so
 * a kprobe on the target's completion callback rewrites its result
 * argument on the way in.  Test use only.
 *
 *   echo -12 > /sys/module/subvol_fault/parameters/error
 *   echo 100 > /sys/module/subvol_fault/parameters/count
 *   cat /sys/module/subvol_fault/parameters/injected
 *
 * Only completions that succeeded are turned into errors: the host did
 * the I/O, so a retry repeats it harmlessly, and a write that the target
 * fails for good has still reached the file, which the test must allow.
 */
#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/ptrace.h>

static int error = -ENOMEM;
module_param(error, int, 0644);
MODULE_PARM_DESC(error, "The error to inject (a negative errno)");

static atomic_t count = ATOMIC_INIT(0);
static atomic_t injected = ATOMIC_INIT(0);

static int subvol_fault_set_count(const char *val,
				  const struct kernel_param *kp)
{
	int n, r;

	r = kstrtoint(val, 10, &n);
	if (r)
		return r;
	if (n < 0)
		return -EINVAL;
	atomic_set(&count, n);
	return 0;
}

static int subvol_fault_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(kp->arg));
}

static const struct kernel_param_ops count_ops = {
	.set = subvol_fault_set_count,
	.get = subvol_fault_get,
};
module_param_cb(count, &count_ops, &count, 0644);
MODULE_PARM_DESC(count, "How many more completions to fail");

static const struct kernel_param_ops injected_ops = {
	.get = subvol_fault_get,
};
module_param_cb(injected, &injected_ops, &injected, 0444);
MODULE_PARM_DESC(injected, "How many completions were failed");

/* subvol_rw_complete(struct kiocb *iocb, long ret): ret is the 2nd arg. */
static int subvol_fault_pre(struct kprobe *p, struct pt_regs *regs)
{
	long ret = (long)regs_get_kernel_argument(regs, 1);

	if (ret < 0 || atomic_dec_if_positive(&count) < 0)
		return 0;
	atomic_inc(&injected);
#ifdef CONFIG_X86_64
	regs->si = (unsigned long)(long)READ_ONCE(error);
#endif
	return 0;
}

static struct kprobe subvol_fault_kp = {
	.symbol_name = "subvol_rw_complete",
	.pre_handler = subvol_fault_pre,
};

static int __init subvol_fault_init(void)
{
	if (!IS_ENABLED(CONFIG_X86_64))
		return -EOPNOTSUPP;
	if (error >= 0 || error < -MAX_ERRNO)
		return -EINVAL;
	return register_kprobe(&subvol_fault_kp);
}

static void __exit subvol_fault_exit(void)
{
	unregister_kprobe(&subvol_fault_kp);
}

module_init(subvol_fault_init);
module_exit(subvol_fault_exit);
MODULE_DESCRIPTION("dm-subvol test fault injection");
MODULE_LICENSE("GPL");
