# bench/validate: the model library against published analytic models and
# independent reference simulations (docs/validation.md), no QEMU.
#
#   $(BUILD)/validate/validate        the program: validate [--short]
#                                     [gc] [nand] [cache]
#   $(BUILD)/validate/test_validate   TAP: the short version, one test per
#                                     case (seconds), in UNIT_TESTS
#   make validate                     the full table (minutes);
#                                     VALIDATE_ARGS="nand cache" for a part

VALIDATE_DIR := $(TOP)/bench/validate
VALIDATE_OUT := $(BUILD)/validate
VALIDATE_MAINS := $(VALIDATE_DIR)/validate.c $(VALIDATE_DIR)/test_validate.c
VALIDATE_SRCS := $(filter-out $(VALIDATE_MAINS),$(wildcard $(VALIDATE_DIR)/*.c))
VALIDATE_OBJS := $(patsubst $(VALIDATE_DIR)/%.c,$(VALIDATE_OUT)/obj/%.o,$(VALIDATE_SRCS))
VALIDATE_BIN := $(VALIDATE_OUT)/validate
VALIDATE_TEST := $(VALIDATE_OUT)/test_validate
VALIDATE_ARGS ?=

$(VALIDATE_OUT)/obj/%.o: $(VALIDATE_DIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(PROJECT_CFLAGS) $(MODEL_INCLUDES) -I$(TOP)/tests -c $< -o $@

$(VALIDATE_BIN): $(VALIDATE_OUT)/obj/validate.o $(VALIDATE_OBJS) $(MODEL_LIB)
	$(CC) $(PROJECT_CFLAGS) -o $@ $^ $(PROJECT_LDLIBS)

$(VALIDATE_TEST): $(VALIDATE_OUT)/obj/test_validate.o $(VALIDATE_OBJS) \
    $(MODEL_LIB)
	$(CC) $(PROJECT_CFLAGS) -o $@ $^ $(PROJECT_LDLIBS)

-include $(wildcard $(VALIDATE_OUT)/obj/*.d)

UNIT_TESTS += $(VALIDATE_TEST)
TEST_AREAS += validate
TEST_AREA_validate := $(VALIDATE_TEST)

.PHONY: validate
all: $(VALIDATE_BIN)
validate: $(VALIDATE_BIN)
	@$(VALIDATE_BIN) $(VALIDATE_ARGS)
